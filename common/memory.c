/* memory: not written yet */
