BEGIN
{
	self->s = "thread";
	printf("%s %s\n", self->s, strjoin(self->s, "-local"));
	exit(0);
}
