/* A predicate may read a global its own clause's actions assign (DTrace
   checks the actions first when the predicate names an unknown variable). */
profile:::tick-1ms
/i < 3/
{
	i++;
	printf("%d\n", i);
}

profile:::tick-1ms
/i == 3/
{
	exit(0);
}
