"""The e5 tests run the engine on one thread: CI runs them beside other jobs on 2 cores, where one
thread per process is the fastest and steadiest. (The shipped default uses every core.)"""

import os

os.environ.setdefault("ZKR_E5_THREADS", "1")
