/* The OpenCL runtime layer: devices, context, kernel files, builds and launches. */
#include "runtime/clrt.h"
#include "runtime/data_files.h"
#include "runtime/programs.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *pbfcl_cl_type_name(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return "GPU";
    if (type & CL_DEVICE_TYPE_CPU)
        return "CPU";
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

static void query_string(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
    buf[0] = '\0';
    if (clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS)
        snprintf(buf, size, "?");
    buf[size - 1] = '\0';
}

void pbfcl_cl_device_info(cl_platform_id p, cl_device_id d, pbfcl_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->platform = p;
    info->device = d;
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof info->platform_name, info->platform_name,
                          NULL) != CL_SUCCESS)
        snprintf(info->platform_name, sizeof info->platform_name, "?");
    query_string(d, CL_DEVICE_NAME, info->device_name, sizeof info->device_name);
    query_string(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    query_string(d, CL_DEVICE_VERSION, info->version, sizeof info->version);
    query_string(d, CL_DEVICE_OPENCL_C_VERSION, info->c_version, sizeof info->c_version);
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof info->type, &info->type, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof info->compute_units,
                    &info->compute_units, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof info->global_mem, &info->global_mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof info->max_alloc, &info->max_alloc,
                    NULL);
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof info->local_mem, &info->local_mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof info->max_wg, &info->max_wg, NULL);

    size_t ext_size = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_size) == CL_SUCCESS && ext_size) {
        char *ext = malloc(ext_size + 1);
        if (ext && clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, ext_size, ext, NULL) == CL_SUCCESS) {
            ext[ext_size] = '\0';
            info->gl_sharing = strstr(ext, "cl_khr_gl_sharing") != NULL;
            info->gl_event = strstr(ext, "cl_khr_gl_event") != NULL;
        }
        free(ext);
    }
}

pbfcl_status pbfcl_cl_enumerate(pbfcl_device_info **out, int *count)
{
    *out = NULL;
    *count = 0;
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || np == 0)
        return PBFCL_OK; /* no ICD registered: an empty list, not an error */
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "clGetPlatformIDs", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return PBFCL_ERR_OUT_OF_MEMORY;
    err = clGetPlatformIDs(np, plats, NULL);
    if (err != CL_SUCCESS) {
        free(plats);
        pbfcl_report_cl(err, "clGetPlatformIDs", __FILE__, __LINE__);
        return PBFCL_ERR_OPENCL;
    }
    pbfcl_device_info *list = NULL;
    int n = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        cl_device_id *devs = calloc(nd, sizeof *devs);
        pbfcl_device_info *grown = realloc(list, (size_t)(n + (int)nd) * sizeof *list);
        if (!devs || !grown) {
            free(devs);
            free(grown ? grown : list);
            free(plats);
            return PBFCL_ERR_OUT_OF_MEMORY;
        }
        list = grown;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL) == CL_SUCCESS) {
            for (cl_uint d = 0; d < nd; d++) {
                pbfcl_cl_device_info(plats[p], devs[d], &list[n]);
                list[n].index = n;
                n++;
            }
        }
        free(devs);
    }
    free(plats);
    *out = list;
    *count = n;
    return PBFCL_OK;
}

static void print_mib(FILE *f, const char *label, cl_ulong bytes)
{
    if (bytes >= (cl_ulong)1 << 30)
        fprintf(f, "  %-22s %.1f GiB\n", label, (double)bytes / (1 << 30));
    else if (bytes >= (cl_ulong)1 << 20)
        fprintf(f, "  %-22s %.1f MiB\n", label, (double)bytes / (1 << 20));
    else
        fprintf(f, "  %-22s %.1f KiB\n", label, (double)bytes / 1024.0);
}

static void print_device(FILE *f, const pbfcl_device_info *d)
{
    fprintf(f, "[%d] %s / %s\n", d->index, d->platform_name, d->device_name);
    fprintf(f, "  %-22s %s\n", "type", pbfcl_cl_type_name(d->type));
    fprintf(f, "  %-22s %s\n", "vendor", d->vendor);
    fprintf(f, "  %-22s %s\n", "OpenCL", d->version);
    fprintf(f, "  %-22s %s\n", "OpenCL C", d->c_version);
    fprintf(f, "  %-22s %u\n", "compute units", d->compute_units);
    print_mib(f, "global memory", d->global_mem);
    print_mib(f, "max buffer", d->max_alloc);
    print_mib(f, "local memory", d->local_mem);
    fprintf(f, "  %-22s %zu\n", "max work-group size", d->max_wg);
    fprintf(f, "  %-22s %s\n", "cl_khr_gl_sharing", d->gl_sharing ? "yes" : "no");
}

pbfcl_status pbfcl_cl_print_devices(FILE *f)
{
    pbfcl_device_info *list;
    int n;
    PBFCL_TRY(pbfcl_cl_enumerate(&list, &n));
    if (n == 0) {
        fprintf(f, "No OpenCL devices found. Install an OpenCL driver (for CPU OpenCL on "
                   "Debian/Ubuntu: apt-get install pocl-opencl-icd) and check with clinfo.\n");
        return PBFCL_ERR_NO_DEVICE;
    }
    for (int i = 0; i < n; i++)
        print_device(f, &list[i]);
    free(list);
    return PBFCL_OK;
}

static bool contains_ci(const char *hay, const char *needle)
{
    size_t nl = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < nl && hay[k] &&
               tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == nl)
            return true;
    }
    return nl == 0;
}

static int match_spec(const pbfcl_device_info *list, int n, const char *spec)
{
    char *end = NULL;
    long idx = strtol(spec, &end, 10);
    if (end != spec && *end == '\0')
        return (idx >= 0 && idx < n) ? (int)idx : -1;
    for (int i = 0; i < n; i++)
        if (contains_ci(list[i].device_name, spec) || contains_ci(list[i].platform_name, spec))
            return i;
    return -1;
}

pbfcl_status pbfcl_cl_select(const char *spec, pbfcl_device_info *out)
{
    pbfcl_device_info *list;
    int n;
    PBFCL_TRY(pbfcl_cl_enumerate(&list, &n));
    if (n == 0) {
        pbfcl_errorf("no OpenCL device found; install an OpenCL driver (for CPU OpenCL: "
                     "apt-get install pocl-opencl-icd) and check with `clinfo`");
        return PBFCL_ERR_NO_DEVICE;
    }
    int chosen = -1;
    if (spec && *spec) {
        chosen = match_spec(list, n, spec);
        if (chosen < 0) {
            pbfcl_msg m = {0};
            pbfcl_msg_addf(&m,
                           "device '%s' matches no OpenCL device; give an index or part of a "
                           "platform or device name from this list:",
                           spec);
            for (int i = 0; i < n; i++)
                pbfcl_msg_addf(&m, "\n  [%d] %s / %s (%s)", i, list[i].platform_name,
                               list[i].device_name, pbfcl_cl_type_name(list[i].type));
            pbfcl_msg_log(&m, PBFCL_LOG_ERROR);
            free(list);
            return PBFCL_ERR_BAD_DEVICE;
        }
    } else {
        for (int i = 0; i < n && chosen < 0; i++)
            if (list[i].type & CL_DEVICE_TYPE_GPU)
                chosen = i;
        if (chosen < 0)
            chosen = 0;
    }
    *out = list[chosen];
    free(list);
    return PBFCL_OK;
}

pbfcl_status pbfcl_cl_create(pbfcl_cl *cl, const pbfcl_device_info *dev,
                             const cl_context_properties *extra_props)
{
    memset(cl, 0, sizeof *cl);
    pbfcl_program_cache_init(&cl->programs);
    cl->dev = *dev;

    cl_context_properties props[32];
    int np = 0;
    props[np++] = CL_CONTEXT_PLATFORM;
    props[np++] = (cl_context_properties)dev->platform;
    for (int i = 0; extra_props && extra_props[i] && np < 29; i += 2) {
        props[np++] = extra_props[i];
        props[np++] = extra_props[i + 1];
    }
    props[np] = 0;

    cl_int err;
    cl->context = clCreateContext(props, 1, &dev->device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "clCreateContext", __FILE__, __LINE__);
        pbfcl_cl_destroy(cl);
        return PBFCL_ERR_OPENCL;
    }
    cl->queue = clCreateCommandQueue(cl->context, dev->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "clCreateCommandQueue", __FILE__, __LINE__);
        pbfcl_cl_destroy(cl);
        return PBFCL_ERR_OPENCL;
    }
    cl->profiling = true;
    return PBFCL_OK;
}

pbfcl_status pbfcl_cl_open(pbfcl_cl *cl, const char *spec)
{
    pbfcl_device_info dev;
    memset(cl, 0, sizeof *cl);
    PBFCL_TRY(pbfcl_cl_select(spec, &dev));
    return pbfcl_cl_create(cl, &dev, NULL);
}

pbfcl_status pbfcl_cl_wrap(pbfcl_cl *cl, cl_context context, cl_device_id device,
                           cl_command_queue queue)
{
    memset(cl, 0, sizeof *cl);
    pbfcl_program_cache_init(&cl->programs);
    cl_platform_id platform = NULL;
    cl_context queue_context = NULL;
    cl_device_id queue_device = NULL;
    PBFCL_CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL));
    PBFCL_CL_CHECK(
        clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, NULL));
    PBFCL_CL_CHECK(
        clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, NULL));
    if (queue_context != context || queue_device != device) {
        pbfcl_errorf("the command queue given belongs to another %s than the one given",
                     queue_context != context ? "context" : "device");
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    cl_command_queue_properties props = 0;
    PBFCL_CL_CHECK(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    pbfcl_cl_device_info(platform, device, &cl->dev);
    cl->dev.index = -1;
    PBFCL_CL_CHECK(clRetainContext(context));
    cl->context = context;
    cl_int err = clRetainCommandQueue(queue);
    if (err != CL_SUCCESS) {
        pbfcl_report_cl(err, "clRetainCommandQueue", __FILE__, __LINE__);
        pbfcl_cl_destroy(cl);
        return PBFCL_ERR_OPENCL;
    }
    cl->queue = queue;
    cl->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
    return PBFCL_OK;
}

/* The embedded entry of kernel file name: in own (may be NULL), else the library's; NULL if
 * neither has it. */
static const pbfcl_embedded_file *embedded_file(const pbfcl_embedded_file *own, const char *name)
{
    for (const pbfcl_embedded_file *e = own; e && e->name; e++)
        if (!strcmp(e->name, name))
            return e;
    for (const pbfcl_embedded_file *e = pbfcl_embedded_kernels; e->name; e++)
        if (!strcmp(e->name, name))
            return e;
    return NULL;
}

/* The path of kernel file e in override directory dir: its folder's copy (dir/grid/hash.cl) if
 * readable, else a flat copy (dir/hash.cl) if readable (true), else the folder's (false). */
static bool override_path(const char *dir, const pbfcl_embedded_file *e, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, e->path);
    if (access(path, R_OK) == 0)
        return true;
    char flat[1300];
    snprintf(flat, sizeof flat, "%s/%s", dir, e->name);
    if (access(flat, R_OK) != 0)
        return false;
    snprintf(path, size, "%s", flat);
    return true;
}

pbfcl_status pbfcl_cl_use_kernel_dir(pbfcl_cl *cl, const char *dir)
{
    cl->kernel_dir[0] = '\0';
    if (!dir || !*dir)
        return PBFCL_OK;
    if (strlen(dir) >= sizeof cl->kernel_dir) {
        pbfcl_errorf("kernel directory path too long (%zu characters, at most %zu): %s",
                     strlen(dir), sizeof cl->kernel_dir - 1, dir);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (int p = 0; p < PBFCL_PROGRAM_COUNT; p++) {
        const pbfcl_program_desc *desc = pbfcl_program((pbfcl_program_id)p);
        for (int f = 0; f < desc->nfiles; f++) {
            const pbfcl_embedded_file *e = embedded_file(NULL, desc->files[f]);
            char path[1300];
            if (e && override_path(dir, e, path, sizeof path))
                continue;
            pbfcl_errorf("kernel override directory %s has no readable %s (nor %s) (%s); point "
                         "the override (PBFCL_KERNEL_DIR for the pbfcl program) at a copy of "
                         "pbfcl's cl/ (its folders, or every file flat), or unset it to use the "
                         "kernels built into the library",
                         dir, e ? e->path : desc->files[f], desc->files[f], strerror(errno));
            return PBFCL_ERR_KERNEL_FILE;
        }
    }
    snprintf(cl->kernel_dir, sizeof cl->kernel_dir, "%s", dir);
    return PBFCL_OK;
}

void pbfcl_cl_destroy(pbfcl_cl *cl)
{
    if (!cl)
        return;
    if (cl->queue) {
        clFinish(cl->queue);
        clReleaseCommandQueue(cl->queue);
    }
    pbfcl_program_cache_destroy(&cl->programs);
    if (cl->context)
        clReleaseContext(cl->context);
    cl->queue = NULL;
    cl->context = NULL;
}

/* The text of kernel file e: read from the override directory, or built in. *allocated tells
 * whether to free it. */
static const char *kernel_text(const char *dir, const pbfcl_embedded_file *e, size_t *len,
                               bool *allocated)
{
    *allocated = false;
    if (!dir || !*dir) {
        *len = e->size;
        return e->text;
    }
    char path[1300];
    override_path(dir, e, path, sizeof path);
    char *text = pbfcl_read_text_file(path, len);
    if (!text)
        pbfcl_errorf("cannot read kernel file %s: %s (kernel override directory: %s; point it "
                     "at a copy of pbfcl's cl/ (its folders, or every file flat), or unset it "
                     "(PBFCL_KERNEL_DIR for the pbfcl program) to use the kernels built into "
                     "the library)",
                     path, strerror(errno), dir);
    *allocated = text != NULL;
    return text;
}

/* Concatenates the files, each after a #line directive naming its path under cl/. */
static pbfcl_status load_sources(const char *dir, const pbfcl_embedded_file *own,
                                 const char *const *files, int nfiles, char **out)
{
    size_t total = 1, cap = 0;
    char *src = NULL;
    for (int i = 0; i < nfiles; i++) {
        size_t len = 0;
        bool allocated;
        const pbfcl_embedded_file *e = embedded_file(own, files[i]);
        if (!e)
            pbfcl_errorf("kernel file %s is not built into this library or program (a build "
                         "error: it is missing from the files of cl/ CMake embedded)",
                         files[i]);
        const char *text = e ? kernel_text(dir, e, &len, &allocated) : NULL;
        if (!text) {
            free(src);
            return PBFCL_ERR_KERNEL_FILE;
        }
        char header[1400];
        int hl = snprintf(header, sizeof header, "#line 1 \"%s\"\n", e->path);
        size_t need = total + (size_t)hl + len + 1;
        if (need > cap) {
            cap = need * 2;
            char *grown = realloc(src, cap);
            if (!grown) {
                if (allocated)
                    free((char *)text);
                free(src);
                return PBFCL_ERR_OUT_OF_MEMORY;
            }
            if (!src)
                grown[0] = '\0';
            src = grown;
        }
        memcpy(src + total - 1, header, (size_t)hl);
        memcpy(src + total - 1 + hl, text, len);
        src[total - 1 + hl + len] = '\n';
        total += (size_t)hl + len + 1;
        src[total - 1] = '\0';
        if (allocated)
            free((char *)text);
    }
    *out = src;
    return PBFCL_OK;
}

static void print_build_failure(pbfcl_cl *cl, cl_program program, const pbfcl_embedded_file *own,
                                const char *const *files, int nfiles, const char *options)
{
    pbfcl_msg m = {0};
    pbfcl_msg_addf(&m, "OpenCL build failed\n");
    pbfcl_msg_addf(&m, "  device:  %s / %s\n", cl->dev.platform_name, cl->dev.device_name);
    pbfcl_msg_addf(&m, "  files:  ");
    for (int i = 0; i < nfiles; i++) {
        const pbfcl_embedded_file *e = embedded_file(own, files[i]);
        char path[1300];
        if (cl->kernel_dir[0])
            override_path(cl->kernel_dir, e, path, sizeof path);
        else
            snprintf(path, sizeof path, "(built in) cl/%s", e->path);
        pbfcl_msg_addf(&m, " %s", path);
    }
    pbfcl_msg_addf(&m, "\n  options: %s\n", options ? options : "");
    if (cl->kernel_dir[0])
        pbfcl_msg_addf(&m,
                       "  the kernels come from the override directory %s: fix the files there, "
                       "or unset the override (PBFCL_KERNEL_DIR for the pbfcl program) to use "
                       "the kernels built into the library\n",
                       cl->kernel_dir);
    size_t log_size = 0;
    clGetProgramBuildInfo(program, cl->dev.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size);
    char *log = malloc(log_size + 1);
    if (log && clGetProgramBuildInfo(program, cl->dev.device, CL_PROGRAM_BUILD_LOG, log_size, log,
                                     NULL) == CL_SUCCESS) {
        log[log_size] = '\0';
        pbfcl_msg_addf(&m, "  build log:\n%s", log);
    }
    free(log);
    pbfcl_msg_log(&m, PBFCL_LOG_ERROR);
}

/* Logs a build (or a reuse of one kept) at INFO when cl->trace_builds is on: "# build" lines are
 * what tests/portability/kernel_builds_match.sh compares. */
static void trace_build(const pbfcl_cl *cl, const char *what, const char *const *files, int nfiles,
                        const char *options)
{
    if (!cl->trace_builds)
        return;
    pbfcl_msg m = {0};
    pbfcl_msg_addf(&m, "# %s\t", what);
    for (int i = 0; i < nfiles; i++)
        pbfcl_msg_addf(&m, "%s%s", i ? "," : "", files[i]);
    pbfcl_msg_addf(&m, "\t%s", options ? options : "");
    pbfcl_msg_log(&m, PBFCL_LOG_INFO);
}

/* The program cache's key of a build: the files and the options; NULL (nothing kept) for an
 * override directory's files, which may change between builds, or when memory runs out. */
static char *program_key(const pbfcl_cl *cl, const char *const *files, int nfiles,
                         const char *options)
{
    if (cl->kernel_dir[0])
        return NULL;
    size_t len = strlen(options ? options : "") + 2;
    for (int i = 0; i < nfiles; i++)
        len += strlen(files[i]) + 1;
    char *key = malloc(len);
    if (!key)
        return NULL;
    key[0] = '\0';
    for (int i = 0; i < nfiles; i++) {
        strcat(key, files[i]);
        strcat(key, ",");
    }
    strcat(key, "\t");
    strcat(key, options ? options : "");
    return key;
}

static pbfcl_status build_program(pbfcl_cl *cl, const pbfcl_embedded_file *own,
                                  const char *const *files, int nfiles, const char *options,
                                  cl_program *out)
{
    char *src = NULL;
    PBFCL_TRY(load_sources(cl->kernel_dir, own, files, nfiles, &src));
    trace_build(cl, "build", files, nfiles, options);
    cl_int err;
    const char *srcs[1] = {src};
    cl_program program = clCreateProgramWithSource(cl->context, 1, srcs, NULL, &err);
    free(src);
    PBFCL_CL_CREATED(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &cl->dev.device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        if (err == CL_BUILD_PROGRAM_FAILURE)
            print_build_failure(cl, program, own, files, nfiles, options);
        else
            pbfcl_report_cl(err, "clBuildProgram", __FILE__, __LINE__);
        clReleaseProgram(program);
        return err == CL_BUILD_PROGRAM_FAILURE ? PBFCL_ERR_BUILD : PBFCL_ERR_OPENCL;
    }
    *out = program;
    return PBFCL_OK;
}

pbfcl_status pbfcl_cl_build(pbfcl_cl *cl, const char *const *files, int nfiles, const char *options,
                            cl_program *out)
{
    return pbfcl_cl_build_with(cl, NULL, files, nfiles, options, out);
}

pbfcl_status pbfcl_cl_build_with(pbfcl_cl *cl, const pbfcl_embedded_file *own,
                                 const char *const *files, int nfiles, const char *options,
                                 cl_program *out)
{
    *out = NULL;
    char *key = program_key(cl, files, nfiles, options);
    if ((*out = pbfcl_program_cache_find(&cl->programs, key))) {
        trace_build(cl, "reuse", files, nfiles, options);
        free(key);
        return PBFCL_OK;
    }
    pbfcl_status st = build_program(cl, own, files, nfiles, options, out);
    if (st == PBFCL_OK)
        pbfcl_program_cache_put(&cl->programs, key, *out);
    free(key);
    return st;
}

pbfcl_status pbfcl_cl_kernel(cl_program program, const char *name, cl_kernel *out)
{
    cl_int err;
    *out = clCreateKernel(program, name, &err);
    if (err != CL_SUCCESS) {
        pbfcl_errorf("cannot create kernel '%s': %s", name, pbfcl_cl_error_name(err));
        *out = NULL;
        return PBFCL_ERR_OPENCL;
    }
    return PBFCL_OK;
}

size_t pbfcl_cl_kernel_max_wg(const pbfcl_cl *cl, cl_kernel kernel)
{
    size_t wg = 0;
    if (clGetKernelWorkGroupInfo(kernel, cl->dev.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                                 NULL) != CL_SUCCESS)
        wg = cl->dev.max_wg;
    return wg < cl->dev.max_wg ? wg : cl->dev.max_wg;
}

pbfcl_status pbfcl_cl_check_launch(const pbfcl_cl *cl, cl_kernel kernel, const char *name,
                                   size_t wg, size_t local_bytes)
{
    size_t max_wg = pbfcl_cl_kernel_max_wg(cl, kernel);
    if (wg == 0 || wg > max_wg) {
        pbfcl_errorf("kernel %s needs work-group size %zu but %s allows at most %zu for it; "
                     "choose a smaller work-group size (--wg)",
                     name, wg, cl->dev.device_name, max_wg);
        return PBFCL_ERR_DEVICE_LIMIT;
    }
    cl_ulong kernel_local = 0;
    clGetKernelWorkGroupInfo(kernel, cl->dev.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof kernel_local,
                             &kernel_local, NULL);
    if (local_bytes > kernel_local)
        kernel_local = local_bytes;
    if (kernel_local > cl->dev.local_mem) {
        pbfcl_errorf("kernel %s needs %llu bytes of local memory but %s has %llu; choose a "
                     "smaller work-group size",
                     name, (unsigned long long)kernel_local, cl->dev.device_name,
                     (unsigned long long)cl->dev.local_mem);
        return PBFCL_ERR_DEVICE_LIMIT;
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_cl_pay_owed(pbfcl_cl *cl)
{
    if (!cl->owed)
        return PBFCL_OK;
    pbfcl_status (*owed)(void *) = cl->owed;
    cl->owed = NULL;
    return owed(cl->owed_ctx);
}

pbfcl_status pbfcl_cl_launch(pbfcl_cl *cl, cl_kernel kernel, size_t items, size_t wg,
                             pbfcl_profile *prof, pbfcl_stage stage)
{
    PBFCL_TRY(pbfcl_cl_pay_owed(cl)); /* an exchange in flight completes before any launch */
    if (items == 0)
        return PBFCL_OK;
    size_t global = (items + wg - 1) / wg * wg;
    cl_event ev = NULL;
    PBFCL_CL_CHECK(clEnqueueNDRangeKernel(cl->queue, kernel, 1, NULL, &global, &wg, 0, NULL,
                                          prof ? &ev : NULL));
    if (prof)
        pbfcl_profile_add(prof, stage, ev, kernel);
    return PBFCL_OK;
}

pbfcl_status pbfcl_cl_buffer(pbfcl_cl *cl, cl_mem_flags flags, size_t size, const char *what,
                             cl_mem *out)
{
    *out = NULL;
    if (size == 0)
        size = 4;
    if (size > cl->dev.max_alloc) {
        pbfcl_errorf("buffer '%s' needs %zu bytes but %s allows at most %llu bytes per buffer; "
                     "use fewer particles",
                     what, size, cl->dev.device_name, (unsigned long long)cl->dev.max_alloc);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    cl_int err;
    *out = clCreateBuffer(cl->context, flags, size, NULL, &err);
    if (err != CL_SUCCESS) {
        pbfcl_errorf("cannot create buffer '%s' of %zu bytes: %s", what, size,
                     pbfcl_cl_error_name(err));
        *out = NULL;
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    return PBFCL_OK;
}

void pbfcl_cl_release_buffer(cl_mem *buf)
{
    if (*buf)
        clReleaseMemObject(*buf);
    *buf = NULL;
}

pbfcl_status pbfcl_cl_write_zeros(pbfcl_cl *cl, cl_mem buf, size_t bytes)
{
    /* in blocks of at most 16 MiB from one block of zeros: the neighbour lists of millions of
     * particles are gigabytes, which the host need not hold twice */
    const size_t block = bytes < ((size_t)16 << 20) ? bytes : ((size_t)16 << 20);
    void *zeros = calloc(block ? block : 1, 1);
    if (!zeros)
        return PBFCL_ERR_OUT_OF_MEMORY;
    cl_int err = CL_SUCCESS;
    for (size_t at = 0; at < bytes && err == CL_SUCCESS; at += block) {
        size_t part = bytes - at < block ? bytes - at : block;
        err = clEnqueueWriteBuffer(cl->queue, buf, CL_TRUE, at, part, zeros, 0, NULL, NULL);
    }
    free(zeros);
    PBFCL_CL_CHECK(err);
    return PBFCL_OK;
}

pbfcl_status pbfcl_cl_check_memory(const pbfcl_cl *cl, unsigned long long bytes_needed,
                                   unsigned long long largest_buffer, const char *what)
{
    if (bytes_needed > cl->dev.global_mem) {
        pbfcl_errorf("%s needs %llu bytes (%.1f MiB) of device memory but %s has %llu bytes "
                     "(%.1f MiB); use fewer particles or another device (--device)",
                     what, bytes_needed, bytes_needed / 1048576.0, cl->dev.device_name,
                     (unsigned long long)cl->dev.global_mem, cl->dev.global_mem / 1048576.0);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    if (largest_buffer > cl->dev.max_alloc) {
        pbfcl_errorf("%s needs a buffer of %llu bytes but %s allows at most %llu bytes per "
                     "buffer; use fewer particles or another device (--device)",
                     what, largest_buffer, cl->dev.device_name,
                     (unsigned long long)cl->dev.max_alloc);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    return PBFCL_OK;
}
