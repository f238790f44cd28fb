/* The OpenCL programs the library builds: each one's name and kernel files, in one table so
 * that the modules, `pbfcl-dev kernel-builds` and tools/validate-kernels agree. Files are named
 * by basename, unique over cl/ (each lives in the folder of the part it serves: cl/grid/hash.cl;
 * tests/unit/cl_layout.sh); the embedded table knows each one's folder. */
#ifndef PBFCL_PROGRAMS_H
#define PBFCL_PROGRAMS_H

typedef enum pbfcl_program_id {
    PBFCL_PROGRAM_SCAN,
    PBFCL_PROGRAM_RADIX_SORT,
    PBFCL_PROGRAM_GRID,
    PBFCL_PROGRAM_PBF,
    PBFCL_PROGRAM_PARTICLES,
    PBFCL_PROGRAM_SHAPE_MATCH,
    PBFCL_PROGRAM_SPH,
    PBFCL_PROGRAM_KINEMATIC,
    PBFCL_PROGRAM_DIFFUSE,
    PBFCL_PROGRAM_MULTILEVEL,
    PBFCL_PROGRAM_COLLIDERS,
    PBFCL_PROGRAM_EXCHANGE,
    PBFCL_PROGRAM_COUNT
} pbfcl_program_id;

#define PBFCL_PROGRAM_MAX_FILES 8

typedef struct pbfcl_program_desc {
    const char *name;                           /* e.g. "radix_sort" */
    const char *files[PBFCL_PROGRAM_MAX_FILES]; /* basenames in cl/, concatenated in order */
    int nfiles;
} pbfcl_program_desc;

/* The description of one program. */
const pbfcl_program_desc *pbfcl_program(pbfcl_program_id id);

/* A kernel file built into the library or a program (generated at build time from cl/ by
 * cmake/embed_kernels.cmake). */
typedef struct pbfcl_embedded_file {
    const char *name; /* its basename, e.g. "pbf.cl" */
    const char *path; /* under cl/, e.g. "pbf/pbf.cl" (also under an override directory) */
    const char *text; /* the file's bytes, NUL-terminated */
    unsigned long size;
} pbfcl_embedded_file;

/* Every file of cl/ but cl/dev/ (the developer tool's), ended by an entry with name NULL. */
extern const pbfcl_embedded_file pbfcl_embedded_kernels[];

#endif
