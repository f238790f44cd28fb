/* `pbfcl devices`: the table of OpenCL platforms and devices. */
#include "clrt.h"
#include "commands.h"

#include <string.h>

int cmd_devices(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: pbfcl devices\n\nLists every OpenCL platform and device with the "
                   "index that --device and PBFCL_DEVICE accept.\n");
            return 0;
        }
        fprintf(stderr, "pbfcl: error: devices takes no options (got '%s')\n", argv[i]);
        return 2;
    }
    return pbfcl_cl_print_devices(stdout) == PBFCL_OK ? 0 : 1;
}
