"""Reports of a finished run: the HTML report (tables, plots, analyses; checked in headless
Chromium), ``mutation-report.json`` for mutation-testing-elements viewers, and ``compare``'s
paired differences between arms or suites.
"""
