# A package, so that its conftest is imported as browser.conftest, not as a second
# top-level `conftest` beside the repository's own (conftest.py).
