/* timestamp, vtimestamp and walltimestamp are sampled once per probe firing. */
BEGIN
{
	this->t = timestamp;
	this->v = vtimestamp;
	this->w = walltimestamp;
	printf("%d %d %d\n", timestamp - this->t, vtimestamp - this->v, walltimestamp - this->w);
}

BEGIN
{
	printf("%d\n", timestamp - this->t);
	exit(0);
}
