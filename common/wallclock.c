/* wallclock: not written yet */
