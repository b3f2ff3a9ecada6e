# A package, so that its conftest is imported as browser.conftest and never shadows
# tests/conftest.py, which other tests import as `conftest`.
