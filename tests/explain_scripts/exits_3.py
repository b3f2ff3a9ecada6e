"""Exits with status 3 after printing."""
import sys

print("about to exit")
sys.exit(3)
