/* The programs a context has built, kept for the next solver on it: keyed by the kernel files
 * and build options (the device is the context's), so that creating a solver on a context that
 * built the same programs before makes kernels from them instead of compiling again. */
#ifndef PBFCL_PROGRAM_CACHE_H
#define PBFCL_PROGRAM_CACHE_H

#include "runtime/pbfcl_error.h"

#include <pthread.h>
#include <stdbool.h>

/* Programs kept per context; a solver builds about ten, so this holds about three
 * configurations (work-group size, neighbour capacity, grid) before the oldest goes. */
#define PBFCL_PROGRAM_CACHE_SIZE 32

typedef struct pbfcl_program_cache_entry {
    char *key;              /* the files and options; NULL: a free slot */
    cl_program program;     /* one reference held by the cache */
    unsigned long long use; /* the cache's clock at its last use */
} pbfcl_program_cache_entry;

typedef struct pbfcl_program_cache {
    pthread_mutex_t lock;
    bool ready;               /* lock initialised */
    unsigned long long clock; /* ticks at each find or put */
    unsigned long long builds, reuses;
    pbfcl_program_cache_entry entry[PBFCL_PROGRAM_CACHE_SIZE];
} pbfcl_program_cache;

/* Empties c and makes it ready for use. */
void pbfcl_program_cache_init(pbfcl_program_cache *c);

/* The program built with key, retained for the caller, or NULL (not kept, or c not ready). */
cl_program pbfcl_program_cache_find(pbfcl_program_cache *c, const char *key);

/* Keeps program under key (retaining it; the caller keeps its own reference), releasing the
 * least recently used one when full. Does nothing if c is not ready or memory runs out. */
void pbfcl_program_cache_put(pbfcl_program_cache *c, const char *key, cl_program program);

/* The number of programs kept. */
int pbfcl_program_cache_count(pbfcl_program_cache *c);

/* Releases every program kept and the lock; accepts a zeroed cache and a second call. */
void pbfcl_program_cache_destroy(pbfcl_program_cache *c);

#endif
