/* Cloth, ropes and shapes as shaded surfaces (demo_mesh.h): the topology read once per scene,
 * then per frame the particles' positions, area-weighted vertex normals of the triangles,
 * tube rings along the ropes (a frame carried from ring to ring so that the tube does not
 * twist), and each shape's pose as a model matrix. */
#include "demo_mesh.h"
#include "demo_pick.h"
#include "demo_shader.h"
#include "runtime/pbfcl_error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MESH_PI 3.14159265358979323846f
#define SHAPE_SEGMENTS 32 /* around a sphere's or capsule's axis */

/* Colours: a raspberry cloth with a cream back, hemp ropes, pale grey shapes (none of them the
 * water's blue, the bodies' warm colours or the obstacles' green). */
static const float cloth_front[3] = {0.80f, 0.22f, 0.42f};
static const float cloth_back[3] = {0.85f, 0.76f, 0.58f};
static const float rope_color[3] = {0.72f, 0.52f, 0.28f};
static const float shape_color[3] = {0.74f, 0.74f, 0.78f};

/* A VAO reading vbo as position (location 0) and normal (1), 6 floats per vertex. */
static void make_vao(GLuint *vao, GLuint *vbo, GLuint ebo)
{
    glGenVertexArrays(1, vao);
    glGenBuffers(1, vbo);
    glBindVertexArray(*vao);
    glBindBuffer(GL_ARRAY_BUFFER, *vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)(3 * sizeof(float)));
    if (ebo)
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ebo);
    glBindVertexArray(0);
}

pbfcl_status pbfcl_demo_mesh_create(pbfcl_demo_mesh *m, const char *shader_dir)
{
    memset(m, 0, sizeof *m);
    PBFCL_TRY(pbfcl_demo_shader_program(shader_dir, "mesh.vert", "mesh.frag", &m->program));
    m->u_model = glGetUniformLocation(m->program, "u_model");
    m->u_view = glGetUniformLocation(m->program, "u_view");
    m->u_proj = glGetUniformLocation(m->program, "u_proj");
    m->u_color = glGetUniformLocation(m->program, "u_color");
    m->u_back_color = glGetUniformLocation(m->program, "u_back_color");
    m->u_shine = glGetUniformLocation(m->program, "u_shine");
    m->u_offset = glGetUniformLocation(m->program, "u_offset");
    glGenBuffers(1, &m->ebo);
    make_vao(&m->vao, &m->vbo, m->ebo);
    return PBFCL_OK;
}

static void free_shapes(pbfcl_demo_mesh *m)
{
    for (int i = 0; i < m->shape_count; i++) {
        glDeleteBuffers(1, &m->shapes[i].vbo);
        glDeleteVertexArrays(1, &m->shapes[i].vao);
    }
    m->shape_count = 0;
}

void pbfcl_demo_mesh_destroy(pbfcl_demo_mesh *m)
{
    if (!m)
        return;
    free_shapes(m);
    if (m->vbo)
        glDeleteBuffers(1, &m->vbo);
    if (m->ebo)
        glDeleteBuffers(1, &m->ebo);
    if (m->vao)
        glDeleteVertexArrays(1, &m->vao);
    if (m->program)
        glDeleteProgram(m->program);
    pbfcl_solver_mesh_free(&m->topo);
    free(m->pos);
    free(m->vdata);
    memset(m, 0, sizeof *m);
}

/* The tubes' triangles: each pair of consecutive rings of a line joined by quads. */
static void tube_indices(const pbfcl_solver_mesh *t, unsigned base, unsigned *out)
{
    const unsigned s = PBFCL_DEMO_TUBE_SIDES;
    size_t k = 0;
    for (size_t l = 0; l < t->line_count; l++)
        for (size_t p = t->line_start[l]; p + 1 < t->line_start[l + 1]; p++) {
            unsigned a = base + (unsigned)p * s, b = a + s;
            for (unsigned j = 0; j < s; j++) {
                unsigned j1 = (j + 1) % s;
                unsigned q[6] = {a + j, a + j1, b + j1, a + j, b + j1, b + j};
                memcpy(out + k, q, sizeof q);
                k += 6;
            }
        }
}

/* Uploads the triangles' and tubes' indices (they change only with the topology). */
static pbfcl_status upload_indices(pbfcl_demo_mesh *m)
{
    const pbfcl_solver_mesh *t = &m->topo;
    size_t points = t->line_count ? t->line_start[t->line_count] : 0;
    size_t segs = points - t->line_count * (t->line_count > 0);
    m->cloth_indices = 3 * t->tri_count;
    m->tube_indices = 6 * PBFCL_DEMO_TUBE_SIDES * segs;
    m->tube_vertices = PBFCL_DEMO_TUBE_SIDES * points;
    unsigned *idx = malloc((m->cloth_indices + m->tube_indices + 1) * sizeof *idx);
    free(m->vdata);
    free(m->pos);
    m->vdata = malloc((t->vert_count + m->tube_vertices + 1) * 6 * sizeof(float));
    m->pos = malloc((t->n + 1) * 3 * sizeof(float));
    if (!idx || !m->vdata || !m->pos) {
        free(idx);
        pbfcl_errorf("out of host memory for the meshes of %zu particles", t->n);
        return PBFCL_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < m->cloth_indices; i++)
        idx[i] = t->vert_of[t->tri[i]];
    tube_indices(t, (unsigned)t->vert_count, idx + m->cloth_indices);
    glBindVertexArray(0);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m->ebo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER,
                 (GLsizeiptr)((m->cloth_indices + m->tube_indices) * sizeof *idx), idx,
                 GL_STATIC_DRAW);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, 0);
    free(idx);
    return PBFCL_OK;
}

/* The normal of a vertex of a sphere or capsule (along x, half length hl) at p: from the
 * nearest point of its axis; zero for the other kinds (the face's is used). */
static void lathe_normal(const float *p, float hl, float *n)
{
    float x = p[0] > hl ? p[0] - hl : p[0] < -hl ? p[0] + hl : 0.0f;
    float len = sqrtf(x * x + p[1] * p[1] + p[2] * p[2]);
    n[0] = len > 0 ? x / len : 0, n[1] = len > 0 ? p[1] / len : 0, n[2] = len > 0 ? p[2] / len : 0;
}

static void face_normal(const float *a, const float *b, const float *c, float *n)
{
    float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]},
          v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; k++)
        n[k] = len > 0 ? n[k] / len : 0.0f;
}

/* Shape id's surface as triangles with normals (smooth on spheres and capsules, flat else). */
static pbfcl_status add_shape(pbfcl_demo_mesh *m, pbfcl_solver *s, int id)
{
    pbfcl_shape_info info;
    size_t nv = 0, nt = 0;
    PBFCL_TRY(pbfcl_shape_get_info(s, id, &info));
    PBFCL_TRY(pbfcl_shape_get_surface(s, id, SHAPE_SEGMENTS, NULL, &nv, NULL, &nt));
    float *v = malloc((3 * nv + 1) * sizeof *v), *out = malloc((18 * nt + 1) * sizeof *out);
    unsigned *t = malloc((3 * nt + 1) * sizeof *t);
    pbfcl_status st = v && t && out ? pbfcl_shape_get_surface(s, id, SHAPE_SEGMENTS, v, &nv, t, &nt)
                                    : PBFCL_ERR_OUT_OF_MEMORY;
    bool lathe = info.type == PBFCL_SHAPE_KIND_SPHERE || info.type == PBFCL_SHAPE_KIND_CAPSULE;
    for (size_t i = 0; st == PBFCL_OK && i < nt; i++) {
        float fn[3];
        face_normal(v + 3 * t[3 * i], v + 3 * t[3 * i + 1], v + 3 * t[3 * i + 2], fn);
        for (int c = 0; c < 3; c++) {
            float *o = out + 18 * i + 6 * c;
            memcpy(o, v + 3 * t[3 * i + c], 3 * sizeof *o);
            if (lathe)
                lathe_normal(o, info.half_length, o + 3);
            else
                memcpy(o + 3, fn, sizeof fn);
        }
    }
    if (st == PBFCL_OK) {
        pbfcl_demo_shape_draw *d = &m->shapes[m->shape_count++];
        d->id = id;
        d->bound = 0.0f;
        for (size_t i = 0; i < nv; i++) {
            const float *p = v + 3 * i;
            d->bound = fmaxf(d->bound, sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]));
        }
        d->vertices = (GLsizei)(3 * nt);
        make_vao(&d->vao, &d->vbo, 0);
        glBindBuffer(GL_ARRAY_BUFFER, d->vbo);
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(18 * nt * sizeof *out), out, GL_STATIC_DRAW);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
    }
    free(v);
    free(t);
    free(out);
    return st;
}

/* The solver's shapes (method pbf only: an SPH solver has none). */
static pbfcl_status read_shapes(pbfcl_demo_mesh *m, pbfcl_solver *s)
{
    pbfcl_solver_params p;
    int count = 0;
    free_shapes(m);
    PBFCL_TRY(pbfcl_solver_get_params(s, NULL, &p));
    if (p.method != PBFCL_METHOD_PBF)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_shape_count(s, &count));
    for (int i = 0; i < count && i < PBFCL_MAX_SHAPES; i++) {
        int id;
        PBFCL_TRY(pbfcl_shape_id(s, i, &id));
        PBFCL_TRY(add_shape(m, s, id));
    }
    return PBFCL_OK;
}

pbfcl_status pbfcl_demo_mesh_set_solver(pbfcl_demo_mesh *m, pbfcl_solver *s, size_t n, float r,
                                        int *phases, bool *marked)
{
    *marked = false;
    PBFCL_TRY(pbfcl_solver_mesh_read(&m->topo, s, n));
    m->tube_radius = r;
    PBFCL_TRY(upload_indices(m));
    for (size_t v = 0; v < m->topo.vert_count; v++)
        phases[m->topo.vert[v]] = PBFCL_DEMO_PHASE_MESH;
    *marked = m->topo.vert_count > 0;
    return read_shapes(m, s);
}

/* Area-weighted normals of the triangles at their vertices (positions from m->pos). */
static void cloth_vertices(pbfcl_demo_mesh *m)
{
    const pbfcl_solver_mesh *t = &m->topo;
    float *vd = m->vdata;
    for (size_t v = 0; v < t->vert_count; v++) {
        memcpy(vd + 6 * v, m->pos + 3 * t->vert[v], 3 * sizeof *vd);
        memset(vd + 6 * v + 3, 0, 3 * sizeof *vd);
    }
    for (size_t i = 0; i < t->tri_count; i++) {
        const unsigned *tri = t->tri + 3 * i;
        const float *a = m->pos + 3 * tri[0], *b = m->pos + 3 * tri[1], *c = m->pos + 3 * tri[2];
        float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                      u[0] * w[1] - u[1] * w[0]};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                vd[6 * t->vert_of[tri[k]] + 3 + j] += n[j];
    }
    for (size_t v = 0; v < t->vert_count; v++) {
        float *n = vd + 6 * v + 3, len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int j = 0; j < 3; j++)
            n[j] = len > 0 ? n[j] / len : 0.0f;
    }
}

static float normalize3(float *v)
{
    float len = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3 && len > 0; k++)
        v[k] /= len;
    return len;
}

/* A ring of the tube at point p of a line with tangent t, its side ref (carried from the ring
 * before: the part of it across t) into out. */
static void tube_ring(const float *p, const float *t, float *ref, float r, float *out)
{
    float d = ref[0] * t[0] + ref[1] * t[1] + ref[2] * t[2];
    for (int k = 0; k < 3; k++)
        ref[k] -= d * t[k];
    if (normalize3(ref) < 1e-6f) { /* ref along t: any other side */
        float a[3] = {fabsf(t[0]) < 0.9f ? 1.0f : 0.0f, fabsf(t[0]) < 0.9f ? 0.0f : 1.0f, 0.0f};
        ref[0] = a[1] * t[2] - a[2] * t[1], ref[1] = a[2] * t[0] - a[0] * t[2];
        ref[2] = a[0] * t[1] - a[1] * t[0];
        normalize3(ref);
    }
    float side[3] = {t[1] * ref[2] - t[2] * ref[1], t[2] * ref[0] - t[0] * ref[2],
                     t[0] * ref[1] - t[1] * ref[0]};
    for (int j = 0; j < PBFCL_DEMO_TUBE_SIDES; j++) {
        float a = 2.0f * MESH_PI * (float)j / PBFCL_DEMO_TUBE_SIDES, c = cosf(a), s = sinf(a);
        float *o = out + 6 * j;
        for (int k = 0; k < 3; k++) {
            o[3 + k] = c * ref[k] + s * side[k];
            o[k] = p[k] + r * o[3 + k];
        }
    }
}

/* The tubes' rings along every line, after the mesh's vertices. */
static void tube_vertices(pbfcl_demo_mesh *m)
{
    const pbfcl_solver_mesh *t = &m->topo;
    float *out = m->vdata + 6 * t->vert_count;
    for (size_t l = 0; l < t->line_count; l++) {
        size_t first = t->line_start[l], last = t->line_start[l + 1] - 1;
        float ref[3] = {0.0f, 1.0f, 0.0f};
        for (size_t p = first; p <= last; p++) {
            const float *prev = m->pos + 3 * t->line_pts[p > first ? p - 1 : p];
            const float *next = m->pos + 3 * t->line_pts[p < last ? p + 1 : p];
            float tan[3] = {next[0] - prev[0], next[1] - prev[1], next[2] - prev[2]};
            if (normalize3(tan) < 1e-9f)
                tan[0] = 1.0f;
            tube_ring(m->pos + 3 * t->line_pts[p], tan, ref, m->tube_radius,
                      out + 6 * PBFCL_DEMO_TUBE_SIDES * p);
        }
    }
}

/* The column-major model matrix of a pose (position, unit quaternion x, y, z, w). */
static void pose_matrix(const float *p, const float *q, float *m)
{
    float x = q[0], y = q[1], z = q[2], w = q[3];
    float r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
                  2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
                  2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y)};
    for (int c = 0; c < 3; c++) {
        memcpy(m + 4 * c, r + 3 * c, 3 * sizeof *m);
        m[4 * c + 3] = 0.0f;
    }
    memcpy(m + 12, p, 3 * sizeof *m);
    m[15] = 1.0f;
}

pbfcl_status pbfcl_demo_mesh_update(pbfcl_demo_mesh *m, pbfcl_solver *s)
{
    for (int i = 0; i < m->shape_count; i++) {
        float p[3], q[4];
        PBFCL_TRY(pbfcl_shape_get_pose(s, m->shapes[i].id, p, q));
        pose_matrix(p, q, m->shapes[i].model);
    }
    const pbfcl_solver_mesh *t = &m->topo;
    if (t->vert_count == 0)
        return PBFCL_OK;
    PBFCL_TRY(pbfcl_solver_get_positions(s, m->pos, t->n));
    cloth_vertices(m);
    tube_vertices(m);
    glBindBuffer(GL_ARRAY_BUFFER, m->vbo);
    glBufferData(GL_ARRAY_BUFFER,
                 (GLsizeiptr)((t->vert_count + m->tube_vertices) * 6 * sizeof(float)), m->vdata,
                 GL_STREAM_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return PBFCL_OK;
}

int pbfcl_demo_mesh_pick(const pbfcl_demo_mesh *m, const float origin[3], const float dir[3],
                         float *t)
{
    float centres[3 * PBFCL_MAX_SHAPES], radii[PBFCL_MAX_SHAPES];
    for (int i = 0; i < m->shape_count; i++) {
        memcpy(centres + 3 * i, m->shapes[i].model + 12, 3 * sizeof *centres);
        radii[i] = m->shapes[i].bound;
    }
    int i = pbfcl_demo_pick_sphere(centres, radii, m->shape_count, origin, dir, t);
    return i >= 0 ? m->shapes[i].id : -1;
}

static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

void pbfcl_demo_mesh_draw(void *mesh, const pbfcl_demo_view *v)
{
    pbfcl_demo_mesh *m = mesh;
    if (!m || (m->cloth_indices + m->tube_indices == 0 && m->shape_count == 0))
        return;
    glUseProgram(m->program);
    glUniformMatrix4fv(m->u_view, 1, GL_FALSE, v->view);
    glUniformMatrix4fv(m->u_proj, 1, GL_FALSE, v->proj);
    glUniformMatrix4fv(m->u_model, 1, GL_FALSE, identity);
    glUniform1f(m->u_offset, 0.0f);
    glDisable(GL_CULL_FACE);
    glEnable(GL_DEPTH_TEST);
    glBindVertexArray(m->vao);
    if (m->cloth_indices) {
        glUniform3fv(m->u_color, 1, cloth_front);
        glUniform3fv(m->u_back_color, 1, cloth_back);
        glUniform1f(m->u_shine, 0.3f);
        for (int side = -1; side <= 1; side += 2) { /* the sheet's two faces, r apart from it */
            glUniform1f(m->u_offset, (float)side * m->tube_radius);
            glDrawElements(GL_TRIANGLES, (GLsizei)m->cloth_indices, GL_UNSIGNED_INT, (void *)0);
        }
        glUniform1f(m->u_offset, 0.0f);
    }
    if (m->tube_indices) {
        glUniform3fv(m->u_color, 1, rope_color);
        glUniform3fv(m->u_back_color, 1, rope_color);
        glUniform1f(m->u_shine, 0.5f);
        glDrawElements(GL_TRIANGLES, (GLsizei)m->tube_indices, GL_UNSIGNED_INT,
                       (void *)(m->cloth_indices * sizeof(unsigned)));
    }
    glUniform3fv(m->u_color, 1, shape_color);
    glUniform3fv(m->u_back_color, 1, shape_color);
    glUniform1f(m->u_shine, 1.0f);
    for (int i = 0; i < m->shape_count; i++) {
        glUniformMatrix4fv(m->u_model, 1, GL_FALSE, m->shapes[i].model);
        glBindVertexArray(m->shapes[i].vao);
        glDrawArrays(GL_TRIANGLES, 0, m->shapes[i].vertices);
    }
    glBindVertexArray(0);
}
