/* idset: not written yet */
