/* allocation: not written yet */
