/* The decomposition: slabs along the box's longest axis with equal shares of the particles,
 * and the checks a split must pass. */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"

#include <math.h>
#include <stdlib.h>

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int longest_axis(const pbfcl_scene *scene)
{
    int axis = 0;
    for (int a = 1; a < 3; a++)
        if (scene->domain_max[a] - scene->domain_min[a] >
            scene->domain_max[axis] - scene->domain_min[axis])
            axis = a;
    return axis;
}

pbfcl_status pbfcl_dist_check_layout(const pbfcl_dist_layout *l, float h)
{
    for (int r = 1; r < l->ranks - 1; r++) {
        double width = l->cuts[r + 1] - l->cuts[r];
        if (!(width >= h)) {
            pbfcl_errorf("rank %d of %d would own a slab %.4g m wide along %c, thinner than the "
                         "kernel radius h = %.4g m: its ghosts would come from beyond its "
                         "neighbours. Use fewer ranks (mpirun -np), more particles or a smaller "
                         "particle radius",
                         r, l->ranks, width, "xyz"[l->axis], h);
            return PBFCL_ERR_BAD_ARGUMENT;
        }
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_dist_plan(const pbfcl_scene *scene, float h, const float *positions, size_t n,
                             int ranks, pbfcl_dist_layout *l)
{
    l->axis = longest_axis(scene);
    l->ranks = ranks;
    l->cuts = malloc((size_t)(ranks + 1) * sizeof *l->cuts);
    float *c = malloc((n ? n : 1) * sizeof *c);
    if (!l->cuts || !c) {
        free(c);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    if ((size_t)ranks > n) {
        free(c);
        pbfcl_errorf("%d ranks for %zu particles: use at most %zu ranks (mpirun -np)", ranks, n, n);
        return PBFCL_ERR_BAD_ARGUMENT;
    }
    for (size_t i = 0; i < n; i++)
        c[i] = positions[3 * i + l->axis];
    qsort(c, n, sizeof *c, cmp_float);
    l->cuts[0] = -INFINITY;
    l->cuts[ranks] = INFINITY;
    for (int r = 1; r < ranks; r++) { /* halfway between the last of one share and the next */
        size_t k = n * (size_t)r / (size_t)ranks;
        l->cuts[r] = 0.5 * ((double)c[k - 1] + c[k]);
    }
    free(c);
    return pbfcl_dist_check_layout(l, h);
}

int dist_owner(const pbfcl_dist *d, float c)
{
    int lo = 0, hi = d->size - 1; /* the last r with cuts[r] <= c */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (d->layout.cuts[mid] <= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The smallest float f >= x: for a float c, x <= c exactly when f <= c, and c < x when c < f. */
static float float_at_least(double x)
{
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

void dist_device_bounds(const pbfcl_dist *d, float *b)
{
    int k = d->size;
    const double *cuts = d->layout.cuts;
    for (int r = 0; r < k; r++) { /* the host's tests in double (dist_owner, near_slab) */
        b[r] = float_at_least(cuts[r]);
        b[k + r] = float_at_least(cuts[r] - d->halo);
        b[2 * k + r] = float_at_least(cuts[r + 1] + d->halo);
    }
}
