"""A stand-in for a parameter sweep: prints the arguments it was given."""
import sys

print("sweep", sys.argv[1:])
