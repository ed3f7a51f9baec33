/*
 * exit() stops tracing: the later clauses of the firing that called it do
 * not run (DTrace skips a probe's enablings once it is draining), and their
 * side effects do not happen either. dtrace-utils' tst.begin-exit.
 */
#pragma D option quiet

BEGIN { exit(0); }
BEGIN { printf("shouldn't be here..."); here++; }
END { printf("here %d\n", here); }
