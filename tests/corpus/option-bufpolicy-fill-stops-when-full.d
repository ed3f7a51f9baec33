/*
 * bufpolicy=fill: records fill each CPU's buffer, sized as DTrace sizes
 * them (4 bytes for a printf with no arguments), less the room END's
 * records need; the first that does not fit stops tracing, as exit(0)
 * does, and END fires (the Guide's "fill Policy" and "fill Policy and END
 * Probes"). BEGIN's clauses fire on one CPU: 16 bytes less END's 4 hold
 * three records.
 */
#pragma D option bufpolicy=fill
#pragma D option bufsize=16

BEGIN { printf("one\n"); }
BEGIN { printf("two\n"); }
BEGIN { printf("three\n"); }
BEGIN { printf("four\n"); }
BEGIN { printf("five\n"); }

END
{
	printf("end\n");
}
