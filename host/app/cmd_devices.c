/* `pbfcl devices`: the table of OpenCL platforms and devices, and with --device D the device
 * that D selects (so that a --device value can be tried before a long run). */
#include "clrt.h"
#include "cli_args.h"
#include "commands.h"

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
    if (pbfcl_cl_print_devices(stdout) != PBFCL_OK)
        return 1;
    if (!device)
        return 0;
    pbfcl_device_info dev;
    if (pbfcl_cl_select(device, &dev) != PBFCL_OK)
        return 1;
    printf("--device %s selects: %s (%s)\n", device, dev.device_name, dev.platform_name);
    return 0;
}
