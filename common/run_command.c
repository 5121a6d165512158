/* run_command: not written yet */
