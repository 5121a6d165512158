/* SPDX-License-Identifier: MIT */
/* One line per rank from MPI itself: the launch started an MPI job of the
 * size asked for (tests/cli/localmpi.sh). */
#include <mpi.h>
#include <stdio.h>

int main (int argc, char **argv)
{
    int rank, size;
    MPI_Init (&argc, &argv);
    MPI_Comm_rank (MPI_COMM_WORLD, &rank);
    MPI_Comm_size (MPI_COMM_WORLD, &size);
    printf ("rank %d of %d\n", rank, size);
    MPI_Finalize ();
    return 0;
}
