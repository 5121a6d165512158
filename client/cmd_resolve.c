/* berth resolve: not written yet. */
#include "commands.h"

int cmd_resolve (int argc, char **argv)
{
    (void) argc;
    return cli_fail (1, "resolve", "not implemented yet (%s)", argv[0]);
}
