/* The programs a context has built, by kernel files and options (see program_cache.h). */
#include "runtime/program_cache.h"

#include <stdlib.h>
#include <string.h>

void pbfcl_program_cache_init(pbfcl_program_cache *c)
{
    memset(c, 0, sizeof *c);
    c->ready = pthread_mutex_init(&c->lock, NULL) == 0;
}

cl_program pbfcl_program_cache_find(pbfcl_program_cache *c, const char *key)
{
    if (!c->ready || !key)
        return NULL;
    cl_program found = NULL;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < PBFCL_PROGRAM_CACHE_SIZE && !found; i++) {
        pbfcl_program_cache_entry *e = &c->entry[i];
        if (e->key && !strcmp(e->key, key) && clRetainProgram(e->program) == CL_SUCCESS) {
            found = e->program;
            e->use = ++c->clock;
            c->reuses++;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

/* The slot to fill: a free one, else the least recently used (its program released). */
static pbfcl_program_cache_entry *free_slot(pbfcl_program_cache *c)
{
    pbfcl_program_cache_entry *oldest = &c->entry[0];
    for (int i = 0; i < PBFCL_PROGRAM_CACHE_SIZE; i++) {
        if (!c->entry[i].key)
            return &c->entry[i];
        if (c->entry[i].use < oldest->use)
            oldest = &c->entry[i];
    }
    clReleaseProgram(oldest->program);
    free(oldest->key);
    oldest->key = NULL;
    oldest->program = NULL;
    return oldest;
}

void pbfcl_program_cache_put(pbfcl_program_cache *c, const char *key, cl_program program)
{
    if (!c->ready || !key || !program)
        return;
    char *copy = malloc(strlen(key) + 1);
    if (!copy)
        return;
    strcpy(copy, key);
    pthread_mutex_lock(&c->lock);
    c->builds++;
    pbfcl_program_cache_entry *e = free_slot(c);
    if (clRetainProgram(program) == CL_SUCCESS) {
        e->key = copy;
        e->program = program;
        e->use = ++c->clock;
    } else {
        free(copy);
    }
    pthread_mutex_unlock(&c->lock);
}

int pbfcl_program_cache_count(pbfcl_program_cache *c)
{
    int n = 0;
    if (!c->ready)
        return 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < PBFCL_PROGRAM_CACHE_SIZE; i++)
        n += c->entry[i].key != NULL;
    pthread_mutex_unlock(&c->lock);
    return n;
}

void pbfcl_program_cache_destroy(pbfcl_program_cache *c)
{
    if (!c->ready)
        return;
    for (int i = 0; i < PBFCL_PROGRAM_CACHE_SIZE; i++) {
        if (c->entry[i].key)
            clReleaseProgram(c->entry[i].program);
        free(c->entry[i].key);
    }
    pthread_mutex_destroy(&c->lock);
    memset(c, 0, sizeof *c);
}
