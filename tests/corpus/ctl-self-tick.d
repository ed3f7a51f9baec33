int done;

tick-1ms
/!done/
{
	i++;
	self->seen++;
}

tick-1ms
/i == 5 && !done/
{
	done = 1;
	printf("%d %d\n", i, self->seen >= 1);
	exit(0);
}
