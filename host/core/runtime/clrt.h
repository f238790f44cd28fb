/* The OpenCL runtime layer: device enumeration and selection, context and queue,
 * kernel files loaded at run time and built with options from one place, and
 * checked kernel launches with optional profiling. */
#ifndef PBFCL_CLRT_H
#define PBFCL_CLRT_H

#include "runtime/pbfcl_error.h"
#include "runtime/profile.h"
#include "runtime/program_cache.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Everything pbfcl needs to know about one OpenCL device. */
typedef struct pbfcl_device_info {
    cl_platform_id platform;
    cl_device_id device;
    int index; /* position in the list printed by `pbfcl devices` */
    char platform_name[128];
    char device_name[128];
    char vendor[128];
    char version[96];   /* CL_DEVICE_VERSION */
    char c_version[96]; /* CL_DEVICE_OPENCL_C_VERSION */
    cl_device_type type;
    cl_uint compute_units;
    cl_ulong global_mem;
    cl_ulong max_alloc;
    cl_ulong local_mem;
    size_t max_wg;
    bool gl_sharing; /* cl_khr_gl_sharing offered */
    bool gl_event;   /* cl_khr_gl_event offered */
} pbfcl_device_info;

/* An OpenCL context and in-order profiling queue on one device. */
typedef struct pbfcl_cl {
    pbfcl_device_info dev;
    cl_context context;
    cl_command_queue queue;
    bool profiling;               /* the queue records profiling times */
    bool trace_builds;            /* log every program build (files, options) at INFO */
    char kernel_dir[1024];        /* override folder of the .cl files; "": the built-in kernels */
    pbfcl_program_cache programs; /* the built-in kernels' programs built so far */
    /* Work owed before the next launch (a split simulation's exchange in flight, sim.h): run
     * once by pbfcl_cl_launch first; NULL: none */
    pbfcl_status (*owed)(void *ctx);
    void *owed_ctx;
} pbfcl_cl;

/* Lists every device of every platform; *out is malloc'ed (free it). count may be 0. */
pbfcl_status pbfcl_cl_enumerate(pbfcl_device_info **out, int *count);

/* Prints every platform/device with its properties (the `pbfcl devices` table). */
pbfcl_status pbfcl_cl_print_devices(FILE *f);

/* A short name for a device type: "GPU", "CPU", "accelerator" or "other". */
const char *pbfcl_cl_type_name(cl_device_type type);

/* The properties of device d of platform p. */
void pbfcl_cl_device_info(cl_platform_id p, cl_device_id d, pbfcl_device_info *info);

/* Chooses a device: spec is an index or a case-insensitive substring of the platform or
 * device name; NULL or "" means the first GPU, else the first device (the program reads
 * $PBFCL_DEVICE and passes it on). An unknown spec logs the device list and fails. */
pbfcl_status pbfcl_cl_select(const char *spec, pbfcl_device_info *out);

/* Creates the context and queue on dev. extra_props (may be NULL) are context properties
 * to add, zero-terminated, e.g. the GL sharing ones. Cleans up after itself on failure. */
pbfcl_status pbfcl_cl_create(pbfcl_cl *cl, const pbfcl_device_info *dev,
                             const cl_context_properties *extra_props);

/* Selects a device by spec (see pbfcl_cl_select) and creates a context on it. */
pbfcl_status pbfcl_cl_open(pbfcl_cl *cl, const char *spec);

/* Uses the caller's context, device and queue (retained here, released by pbfcl_cl_destroy);
 * the queue must belong to that context and device. */
pbfcl_status pbfcl_cl_wrap(pbfcl_cl *cl, cl_context context, cl_device_id device,
                           cl_command_queue queue);

/* Builds kernels from the .cl files in dir instead of the built-in ones (NULL or "": the
 * built-in ones). dir is a copy of cl/ (each file in its folder: dir/grid/hash.cl) or holds the
 * files flat (dir/hash.cl); the folder's copy is read first. Fails naming the first file of
 * the library's programs that dir lacks and how to fix it. */
pbfcl_status pbfcl_cl_use_kernel_dir(pbfcl_cl *cl, const char *dir);

/* Releases the queue and context; accepts a zeroed or half-built struct. */
void pbfcl_cl_destroy(pbfcl_cl *cl);

/* Builds one program from the given kernel files (basenames), built in or from the override
 * directory (concatenated, each preceded by a #line directive naming its path under cl/, so
 * build logs name the real file and line). A failed build logs device, files, options and the
 * full build log. The built-in kernels' programs are kept in cl->programs: the same files and
 * options again give the program built before (retained; release it as a new one), so a
 * second solver on a context compiles nothing. An override directory's files are read and
 * built each time. */
pbfcl_status pbfcl_cl_build(pbfcl_cl *cl, const char *const *files, int nfiles, const char *options,
                            cl_program *out);

/* pbfcl_cl_build for a program that carries kernel files of its own (pbfcl-dev's of cl/dev/):
 * a file is looked up in own (ended by an entry with name NULL) before the library's. */
struct pbfcl_embedded_file;
pbfcl_status pbfcl_cl_build_with(pbfcl_cl *cl, const struct pbfcl_embedded_file *own,
                                 const char *const *files, int nfiles, const char *options,
                                 cl_program *out);

/* Creates the named kernel of a built program. */
pbfcl_status pbfcl_cl_kernel(cl_program program, const char *name, cl_kernel *out);

/* The largest work-group size the kernel can be launched with on this device. */
size_t pbfcl_cl_kernel_max_wg(const pbfcl_cl *cl, cl_kernel kernel);

/* Checks that a kernel can run with work-group size wg and local_bytes of local memory
 * on this device; prints the numbers and fails if not. */
pbfcl_status pbfcl_cl_check_launch(const pbfcl_cl *cl, cl_kernel kernel, const char *name,
                                   size_t wg, size_t local_bytes);

/* Runs the work owed before the next launch (cl->owed), if any; every launch calls it first. */
pbfcl_status pbfcl_cl_pay_owed(pbfcl_cl *cl);

/* Launches a 1-D kernel over `items` work-items, rounded up to a multiple of wg (the kernel
 * guards with `if (i >= n) return;`). items == 0 launches nothing. If prof is not NULL the
 * launch's event is recorded under stage. */
pbfcl_status pbfcl_cl_launch(pbfcl_cl *cl, cl_kernel kernel, size_t items, size_t wg,
                             pbfcl_profile *prof, pbfcl_stage stage);

/* Creates a device buffer of size bytes (size 0 creates a 4-byte one so that handles are
 * always valid). Fails with a message naming what and the sizes if over device limits. */
pbfcl_status pbfcl_cl_buffer(pbfcl_cl *cl, cl_mem_flags flags, size_t size, const char *what,
                             cl_mem *out);

/* Releases a buffer if not NULL and clears the handle. */
void pbfcl_cl_release_buffer(cl_mem *buf);

/* Writes zeros over the first bytes of buf from the host, in one write. Where a kernel
 * may read a buffer's zeros before writing them, this, not clEnqueueFillBuffer: Oclgrind's
 * uninitialised-value check counts a host write but not a fill, and a host write of the whole
 * buffer also replaces the record a reused buffer number inherits (ALGORITHM.md, "Oclgrind
 * and reused buffers"). */
pbfcl_status pbfcl_cl_write_zeros(pbfcl_cl *cl, cl_mem buf, size_t bytes);

/* Checks that bytes_needed of device memory is available before allocating anything:
 * prints bytes needed and available and how to fix it if not. */
pbfcl_status pbfcl_cl_check_memory(const pbfcl_cl *cl, unsigned long long bytes_needed,
                                   unsigned long long largest_buffer, const char *what);

#endif
