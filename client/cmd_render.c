/* berth render: not written yet. */
#include "commands.h"

int cmd_render (int argc, char **argv)
{
    (void) argc;
    return cli_fail (1, "render", "not implemented yet (%s)", argv[0]);
}
