/* hostlist: not written yet */
