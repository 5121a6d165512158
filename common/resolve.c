/* resolve: not written yet */
