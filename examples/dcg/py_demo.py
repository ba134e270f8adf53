# The Python program traced by python.stp: sys.audit() events switch the
# dynamic call graph on and off around one call of work().
import sys


def work(n):
    return n * 2


sys.audit("dcg.on")
work(21)
sys.audit("dcg.off")
