/*
 * In END (DTrace's COOLDOWN) exit() sets the status only: END's later
 * clauses still run, and the last exit() gives the status.
 */
#pragma D option quiet

BEGIN { exit(0); }
END { exit(3); }
END { printf("second END clause\n"); exit(0); }
