BEGIN
{
	self->on = 1;
	self->off = 0;
}

BEGIN
/self->on/
{
	printf("self on\n");
}

BEGIN
/!self->off/
{
	printf("self off unset\n");
	exit(0);
}
