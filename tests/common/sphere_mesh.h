/* A closed sphere mesh for the collider tests: an octahedron's faces cut into n x n triangles
 * each and pushed out to the sphere (vertices shared, counter-clockwise from outside), so it
 * has a vertex at each pole (0, +-radius, 0) and is symmetric about the centre. */
#ifndef PBFCL_TEST_SPHERE_MESH_H
#define PBFCL_TEST_SPHERE_MESH_H

#include <math.h>
#include <stdlib.h>

/* The vertex of integer octahedron point (x, y, z) (|x| + |y| + |z| = n), added if new. */
static unsigned sphere_mesh_vertex(int *keys, float *v, size_t *nv, int x, int y, int z, int n,
                                   float radius)
{
    for (size_t i = 0; i < *nv; i++)
        if (keys[3 * i] == x && keys[3 * i + 1] == y && keys[3 * i + 2] == z)
            return (unsigned)i;
    double len = sqrt((double)x * x + (double)y * y + (double)z * z);
    size_t i = (*nv)++;
    keys[3 * i] = x, keys[3 * i + 1] = y, keys[3 * i + 2] = z;
    v[3 * i] = (float)(radius * x / len);
    v[3 * i + 1] = (float)(radius * y / len);
    v[3 * i + 2] = (float)(radius * z / len);
    (void)n;
    return (unsigned)i;
}

/* The sphere of radius about the origin with 8 n^2 triangles into *v (xyz) and *t (free both). */
static void sphere_mesh(int n, float radius, float **v, size_t *nv, unsigned **t, size_t *nt)
{
    size_t most = 8 * (size_t)(n + 1) * (n + 2) / 2;
    int *keys = malloc(3 * most * sizeof *keys);
    *v = malloc(3 * most * sizeof **v);
    *t = malloc(3 * 8 * (size_t)n * n * sizeof **t);
    *nv = *nt = 0;
    for (int o = 0; o < 8; o++) {
        int sx = o & 1 ? -1 : 1, sy = o & 2 ? -1 : 1, sz = o & 4 ? -1 : 1;
        int a[3] = {sx, 0, 0}, b[3] = {0, sy, 0}, c[3] = {0, 0, sz};
        if (sx * sy * sz < 0) /* keep the corners counter-clockwise from outside */
            for (int k = 0; k < 3; k++) {
                int s = b[k];
                b[k] = c[k], c[k] = s;
            }
        for (int i = 0; i < n; i++)
            for (int j = 0; i + j < n; j++) {
                int tri[2][3][2] = {{{i, j}, {i + 1, j}, {i, j + 1}},
                                    {{i + 1, j}, {i + 1, j + 1}, {i, j + 1}}};
                for (int h = 0; h < (i + j + 1 < n ? 2 : 1); h++)
                    for (int k = 0; k < 3; k++) {
                        int u = tri[h][k][0], w = tri[h][k][1], r = n - u - w;
                        (*t)[(*nt) * 3 + k] =
                            sphere_mesh_vertex(keys, *v, nv, a[0] * r + b[0] * u + c[0] * w,
                                               a[1] * r + b[1] * u + c[1] * w,
                                               a[2] * r + b[2] * u + c[2] * w, n, radius);
                        if (k == 2)
                            (*nt)++;
                    }
            }
    }
    free(keys);
}

#endif
