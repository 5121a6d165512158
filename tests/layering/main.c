/* SPDX-License-Identifier: MIT */
/* An empty program that the build links with every object of one library
 * (tests/meson.build): the link fails when that library calls anything
 * beyond what its layer may (the pure core: libc only; berthd's ops: not
 * the connection layer above them). */
int main (void)
{
    return 0;
}
