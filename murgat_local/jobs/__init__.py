"""A command's whole job, set up and run: `murgat score` (`score_run`) and `murgat run` (`grid`).

The layer just under the command line: a job wires the pipeline's runners to the summaries of
`metrics` and the files of `reports` and `results`, which the layers keep above the pipeline.
"""
