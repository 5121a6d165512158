/* launcher: not written yet */
