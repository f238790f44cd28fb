/* bench_neighbours: device time of the neighbours kernel (cl/grid/neighbours.cl) on a jittered
 * lattice (spacing h/2, ~28-33 neighbours each, like a fluid at rest), and a check of its
 * lists against a plain C search. Not part of the build; compile against a built library:
 *   cc -O2 -std=c11 -DCL_TARGET_OPENCL_VERSION=120 -Iinclude -Ihost/core -Icl/common \
 *      tools/bench_neighbours.c b/host/libpbfcl.a -lOpenCL -lm -lpthread
 *   PBFCL_KERNEL_DIR=b/cl ./a.out DEVICE N [REPS] */
#include "grid/grid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 64u
#define TOL 1e-5f

static uint64_t rng_state = 12345;
static float randu(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng_state >> 40) & 0xffffff) / 16777216.0f;
}

/* Checks lists against a brute-force search over the host's own cell binning (cell 1). */
static long check(const float *pos, size_t n, const pbfcl_uint *count, const pbfcl_uint *list,
                  float radius)
{
    int side = 0;
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            side = (int)pos[4 * i + a] + 2 > side ? (int)pos[4 * i + a] + 2 : side;
    size_t cells = (size_t)side * side * side;
    pbfcl_uint *head = malloc(cells * 4), *next = malloc(n * 4), *stamp = calloc(n, 4);
    for (size_t c = 0; c < cells; c++)
        head[c] = PBFCL_EMPTY;
    for (size_t i = 0; i < n; i++) {
        size_t c =
            ((size_t)pos[4 * i + 2] * side + (size_t)pos[4 * i + 1]) * side + (size_t)pos[4 * i];
        next[i] = head[c];
        head[c] = (pbfcl_uint)i;
    }
    const float r2 = radius * radius, inner = r2 * (1 - TOL), outer = r2 * (1 + TOL);
    long bad = 0;
    for (size_t i = 0; i < n && bad < 10; i++) {
        const float *p = &pos[4 * i];
        size_t sure = 0, maybe = 0;
        pbfcl_uint sure_list[256];
        int cx = (int)p[0], cy = (int)p[1], cz = (int)p[2];
        for (int z = cz - 1; z <= cz + 1; z++)
            for (int y = cy - 1; y <= cy + 1; y++)
                for (int x = cx - 1; x <= cx + 1; x++) {
                    if (x < 0 || y < 0 || z < 0 || x >= side || y >= side || z >= side)
                        continue;
                    for (pbfcl_uint j = head[((size_t)z * side + y) * side + x]; j != PBFCL_EMPTY;
                         j = next[j]) {
                        const float *q = &pos[4 * j];
                        float ex = q[0] - p[0], ey = q[1] - p[1], ez = q[2] - p[2];
                        float d2 = ex * ex + ey * ey + ez * ez;
                        if (j != i && d2 < inner && sure < 256)
                            sure_list[sure++] = j;
                        maybe += j != i && d2 < outer;
                    }
                }
        size_t lo = sure < MAXN ? sure : MAXN, hi = maybe < MAXN ? maybe : MAXN;
        if (count[i] < lo || count[i] > hi) {
            fprintf(stderr, "particle %zu: %u listed, expected %zu..%zu\n", i, count[i], lo, hi);
            bad++;
            continue;
        }
        for (pbfcl_uint k = 0; k < count[i]; k++) {
            pbfcl_uint j = list[(size_t)k * n + i];
            if (j >= n || j == i || stamp[j] == i + 1) {
                fprintf(stderr, "particle %zu: bad or repeated entry %u\n", i, j);
                bad++;
                break;
            }
            const float *q = &pos[4 * j];
            float ex = q[0] - p[0], ey = q[1] - p[1], ez = q[2] - p[2];
            if (ex * ex + ey * ey + ez * ez >= outer) {
                fprintf(stderr, "particle %zu: %u listed but too far\n", i, j);
                bad++;
            }
            stamp[j] = (pbfcl_uint)i + 1;
        }
        if (count[i] < MAXN)
            for (size_t s = 0; s < sure; s++)
                if (stamp[sure_list[s]] != i + 1) {
                    fprintf(stderr, "particle %zu: neighbour %u missing\n", i, sure_list[s]);
                    bad++;
                }
    }
    free(head);
    free(next);
    free(stamp);
    return bad;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Runs the grid's neighbours kernel reps times; prints the median time and checks the lists. */
static int run_variant(pbfcl_grid *g, cl_mem sorted_buf, size_t n, float radius, int reps,
                       float *sorted, const char *name)
{
    pbfcl_cl *cl = g->cl;
    cl_kernel k = name ? clCreateKernel(g->program, name, NULL) : g->neighbours;
    if (!k) {
        printf("%s: no such kernel\n", name);
        return 1;
    }
    size_t wg = g->nb_wg;
    cl_uint un = (cl_uint)n;
    cl_float r2 = radius * radius, near2 = 0.25f * r2; /* the contact range of h = 4r */
    cl_mem args[] = {g->params_buf,         sorted_buf,      g->cell_start_buf,    g->cell_end_buf,
                     g->neighbor_count_buf, g->neighbor_buf, g->neighbor_near_buf, g->overflow_buf};
    for (cl_uint a = 0; a < 8; a++)
        clSetKernelArg(k, a, sizeof(cl_mem), &args[a]);
    clSetKernelArg(k, 8, sizeof un, &un);
    clSetKernelArg(k, 9, sizeof r2, &r2);
    clSetKernelArg(k, 10, sizeof near2, &near2);
    size_t global = (n + wg - 1) / wg * wg;
    float t[64];
    for (int r = 0; r < reps + 2; r++) {
        cl_event ev;
        cl_int err = clEnqueueNDRangeKernel(cl->queue, k, 1, NULL, &global, &wg, 0, NULL, &ev);
        if (err != CL_SUCCESS) {
            printf("neighbours wg %zu: launch error %d\n", wg, err);
            return 1;
        }
        clWaitForEvents(1, &ev);
        cl_ulong a, b;
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        clReleaseEvent(ev);
        if (r >= 2)
            t[r - 2] = (float)(b - a) * 1e-6f;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_float);
    pbfcl_uint *count = malloc(n * 4), *list = malloc(n * MAXN * 4);
    clEnqueueReadBuffer(cl->queue, g->neighbor_count_buf, CL_TRUE, 0, n * 4, count, 0, NULL, NULL);
    clEnqueueReadBuffer(cl->queue, g->neighbor_buf, CL_TRUE, 0, n * MAXN * 4, list, 0, NULL, NULL);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += count[i];
    unsigned over = 0;
    pbfcl_grid_read_overflow(g, &over);
    long bad = check(sorted, n, count, list, radius);
    printf("%-12s cell %.0fh wg %4zu: median %.4f ms, min %.4f ms, mean count %.2f, overflow "
           "%u, check %s (%ld)\n",
           name ? name : "neighbours", (double)(g->params.cell_size / radius), wg,
           (double)t[reps / 2], (double)t[0], sum / (double)n, over, bad ? "FAILED" : "ok", bad);
    fflush(stdout);
    free(count);
    free(list);
    if (name)
        clReleaseKernel(k);
    return bad != 0;
}

/* Builds a grid with the given cell size, sorts the particles into it and runs neighbours. */
static int run_grid(pbfcl_cl *cl, const float *pos, size_t n, float side, float cell, int reps,
                    char **names, int nnames)
{
    const float lo[3] = {0, 0, 0}, hi[3] = {side, side, side};
    pbfcl_grid_params gp;
    pbfcl_grid g;
    if (pbfcl_grid_params_fit(lo, hi, cell, &gp) != PBFCL_OK ||
        pbfcl_grid_create(&g, cl, &gp, n, MAXN) != PBFCL_OK)
        return 1;
    cl_mem pos_buf, sorted_buf;
    pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n * 16, "pos", &pos_buf);
    pbfcl_cl_buffer(cl, CL_MEM_READ_WRITE, n * 16, "sorted", &sorted_buf);
    clEnqueueWriteBuffer(cl->queue, pos_buf, CL_TRUE, 0, n * 16, pos, 0, NULL, NULL);
    if (pbfcl_grid_hash(&g, pos_buf, n, NULL) || pbfcl_grid_sort(&g, n, NULL) ||
        pbfcl_grid_reorder(&g, pos_buf, sorted_buf, n, NULL) || pbfcl_grid_cells(&g, n, NULL))
        return 1;
    float *sorted = malloc(n * 16);
    clEnqueueReadBuffer(cl->queue, sorted_buf, CL_TRUE, 0, n * 16, sorted, 0, NULL, NULL);
    int fail = run_variant(&g, sorted_buf, n, 1.0f, reps, sorted, NULL);
    for (int v = 0; v < nnames; v++)
        fail |= run_variant(&g, sorted_buf, n, 1.0f, reps, sorted, names[v]);
    free(sorted);
    pbfcl_cl_release_buffer(&pos_buf);
    pbfcl_cl_release_buffer(&sorted_buf);
    pbfcl_grid_destroy(&g);
    return fail;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_neighbours DEVICE N [REPS [KERNEL...]]\n");
        return 2;
    }
    size_t n = strtoull(argv[2], NULL, 10);
    int reps = argc > 3 ? atoi(argv[3]) : 20;
    reps = reps < 1 ? 1 : reps > 60 ? 60 : reps;
    pbfcl_cl cl;
    if (pbfcl_cl_open(&cl, argv[1]) != PBFCL_OK ||
        pbfcl_cl_use_kernel_dir(&cl, getenv("PBFCL_KERNEL_DIR")) != PBFCL_OK)
        return 1;
    /* A cube of particles with spacing h / 2 (h = 1), jittered by 1 % of h, in random order,
     * inside a domain twice as wide as the block in x (room like a dam-break tank). */
    size_t m = (size_t)ceil(cbrt((double)n));
    float *pos = malloc(n * 16);
    for (size_t i = 0; i < n; i++) {
        size_t x = i % m, y = i / m % m, z = i / m / m;
        pos[4 * i + 0] = 1.0f + 0.5f * (float)x + 0.01f * randu();
        pos[4 * i + 1] = 1.0f + 0.5f * (float)y + 0.01f * randu();
        pos[4 * i + 2] = 1.0f + 0.5f * (float)z + 0.01f * randu();
        pos[4 * i + 3] = 0.0f;
    }
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(randu() * (float)(i + 1)) % (i + 1);
        float t[4];
        memcpy(t, &pos[4 * i], 16);
        memcpy(&pos[4 * i], &pos[4 * j], 16);
        memcpy(&pos[4 * j], t, 16);
    }
    float side = 2.0f + 1.0f * (float)m;
    printf("# %s, n = %zu, lattice %zu^3, %d reps\n", cl.dev.device_name, n, m, reps);
    int fail = run_grid(&cl, pos, n, side, 1.0f, reps, argv + 4, argc > 4 ? argc - 4 : 0);
    free(pos);
    pbfcl_cl_destroy(&cl);
    return fail;
}
