/* `pbfcl devices`: the table of OpenCL platforms and devices, and with --device D the device
 * that D selects (so that a --device value can be tried before a long run). */
#include "cli_args.h"
#include "commands.h"
#include "pbfcl.h"

#include <string.h>

int cmd_devices(int argc, char **argv)
{
    const char *device = NULL;
    for (int i = 1; i < argc;) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: pbfcl devices [--device D]\n\nLists every OpenCL platform and device "
                   "with the index that --device and PBFCL_DEVICE accept; with --device D, also "
                   "the device D selects.\n");
            return 0;
        }
        if (!pbfcl_cli_is(argv[i], "--device")) {
            fprintf(stderr,
                    "pbfcl: error: devices: unknown option '%s' (devices takes only "
                    "--device D)\n",
                    argv[i]);
            return 2;
        }
        if (!pbfcl_cli_value(argc, argv, &i, &device))
            return 2;
    }
    if (pbfcl_devices_print(stdout) != PBFCL_OK)
        return 1;
    if (!device)
        return 0;
    int index;
    char name[512];
    if (pbfcl_device_find(device, &index) != PBFCL_OK ||
        pbfcl_device_name(index, name, sizeof name) != PBFCL_OK)
        return 1;
    printf("--device %s selects: [%d] %s\n", device, index, name);
    return 0;
}
