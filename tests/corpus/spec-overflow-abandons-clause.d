/* A speculation without room for the clause's record drops it and the rest of the clause: its variable updates do not happen (DTrace's probe loop stops there). */
#pragma D option specsize=8

BEGIN
{
	self->spec = speculation();
}

BEGIN
{
	speculate(self->spec);
	printf("more than eight bytes of data\n");
	self->ran = 1;
}

BEGIN
{
	printf("%s\n", self->ran ? "ran" : "abandoned");
	exit(0);
}
