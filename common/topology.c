/* topology: not written yet */
