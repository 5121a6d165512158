/* gpus: not written yet */
