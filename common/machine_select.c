/* machine_select: not written yet */
