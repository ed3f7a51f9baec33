/*
 * bufpolicy=ring: each CPU's buffer keeps its latest records, sized as
 * DTrace sizes them (4 bytes for a printf with no arguments, 8 for
 * exit()), and they are printed when tracing ends (the Guide's "ring
 * Policy"). BEGIN's clauses fire on one CPU: 16 bytes keep the last two
 * printfs and the exit.
 */
#pragma D option bufpolicy=ring
#pragma D option bufsize=16

BEGIN { printf("one\n"); }
BEGIN { printf("two\n"); }
BEGIN { printf("three\n"); }
BEGIN { printf("four\n"); }
BEGIN { printf("five\n"); }
BEGIN { exit(0); }
