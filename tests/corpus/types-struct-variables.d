/* Struct-valued variables hold a copy: this->, self-> and globals. */
struct name16 {
	char text[16];
};

BEGIN
{
	this->c = *curthread->cred;
	self->c = *curthread->cred;
	g = *curthread->cred;
	this->n = *(struct name16 *)&curthread->comm;
	printf("%d %d %d %s\n", this->c.uid.val == uid, self->c.gid.val == gid, g.euid.val == uid, this->n.text);
	exit(0);
}
