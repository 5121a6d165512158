/* machine: not written yet */
