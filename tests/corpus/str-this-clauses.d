BEGIN
{
	this->name = "first";
}

BEGIN
{
	this->name = strjoin(this->name, "+second");
}

BEGIN
{
	printf("%s\n", this->name);
	exit(0);
}
