/* berth machine: not written yet. */
#include "commands.h"

int cmd_machine (int argc, char **argv)
{
    (void) argc;
    return cli_fail (1, "machine", "not implemented yet (%s)", argv[0]);
}
