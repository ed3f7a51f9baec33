BEGIN
{
	this->s = "dtrace";
	self->t = "d";
	printf("[%-8s][%8s][%.2s][%3s]\n", this->s, this->s, this->s, self->t);
	exit(0);
}
