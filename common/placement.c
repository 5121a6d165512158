/* placement: not written yet */
