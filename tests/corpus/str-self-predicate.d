BEGIN
{
	self->state = "running";
}

BEGIN
/self->state == "running"/
{
	printf("state %s\n", self->state);
	self->state = "done";
}

BEGIN
/self->state == "running"/
{
	printf("not reached\n");
}

BEGIN
{
	printf("now %s\n", self->state);
	exit(0);
}
