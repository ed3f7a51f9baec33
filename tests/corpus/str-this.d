BEGIN
{
	this->s = "clause";
	this->t = strjoin(this->s, "!");
	printf("%s %s %d\n", this->s, this->t, this->t == "clause!");
	exit(0);
}
