/* targets: not written yet */
