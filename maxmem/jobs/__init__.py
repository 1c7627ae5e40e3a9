"""The scheduled jobs.

`table` declares each job once: its name, when it runs, what it runs. `due` decides
whether a job is due from its last success; `runs` records when each job last ran and
whether it worked (what `maxmem doctor` reports ages from); `daemon` runs them
(`maxmem daemon`, and the one tick schedulers call).
"""
